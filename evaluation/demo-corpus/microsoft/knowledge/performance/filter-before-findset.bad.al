codeunit 50103 "Payment Hold Vendors Bad"
{
    procedure CollectHeldVendors(var TempVendor: Record Vendor temporary)
    var
        Vendor: Record Vendor;
    begin
        Vendor.SetLoadFields("No.", Name, Blocked);
        if Vendor.FindSet() then
            repeat
                // The blocked state is tested per row instead of being filtered.
                if Vendor.Blocked = Vendor.Blocked::Payment then begin
                    TempVendor := Vendor;
                    TempVendor.Insert();
                end;
            until Vendor.Next() = 0;
    end;
}
