codeunit 50114 "Vendor Item Blocking Good"
{
    procedure BlockItemsOfVendor(VendorNo: Code[20])
    var
        Item: Record Item;
    begin
        Item.SetRange("Vendor No.", VendorNo);
        if Item.FindSet(true) then
            repeat
                Item.Validate(Blocked, true);
                Item.Modify(true);
            until Item.Next() = 0;
    end;
}
