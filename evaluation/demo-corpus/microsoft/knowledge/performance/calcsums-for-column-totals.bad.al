codeunit 50101 "Location Stock Sum Bad"
{
    procedure QuantityAtLocation(ItemNo: Code[20]; LocationCode: Code[10]): Decimal
    var
        ItemLedgerEntry: Record "Item Ledger Entry";
        OnHand: Decimal;
    begin
        ItemLedgerEntry.SetRange("Item No.", ItemNo);
        ItemLedgerEntry.SetRange("Location Code", LocationCode);
        ItemLedgerEntry.SetLoadFields(Quantity);
        // Every entry travels to the server tier only to be added up here.
        if ItemLedgerEntry.FindSet() then
            repeat
                OnHand += ItemLedgerEntry.Quantity;
            until ItemLedgerEntry.Next() = 0;
        exit(OnHand);
    end;
}
