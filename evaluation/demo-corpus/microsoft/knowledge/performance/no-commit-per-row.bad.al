codeunit 50115 "Vendor Item Blocking Bad"
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
                // One transaction per item.
                Commit();
            until Item.Next() = 0;
    end;
}
