codeunit 50102 "Payment Hold Vendors Good"
{
    procedure CollectHeldVendors(var TempVendor: Record Vendor temporary)
    var
        Vendor: Record Vendor;
    begin
        Vendor.SetRange(Blocked, Vendor.Blocked::Payment);
        Vendor.SetLoadFields("No.", Name);
        if Vendor.FindSet() then
            repeat
                TempVendor := Vendor;
                TempVendor.Insert();
            until Vendor.Next() = 0;
    end;
}
