codeunit 50141 "Pick Backlog Probe Bad"
{
    procedure LocationHasPendingPicks(LocationCode: Code[10]): Boolean
    var
        WarehouseActivityLine: Record "Warehouse Activity Line";
    begin
        WarehouseActivityLine.SetRange("Activity Type", WarehouseActivityLine."Activity Type"::Pick);
        WarehouseActivityLine.SetRange("Location Code", LocationCode);
        // The row is fetched only to learn that it exists.
        if WarehouseActivityLine.FindFirst() then
            exit(true);
        exit(false);
    end;
}
