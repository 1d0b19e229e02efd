codeunit 50140 "Pick Backlog Probe Good"
{
    procedure LocationHasPendingPicks(LocationCode: Code[10]): Boolean
    var
        WarehouseActivityLine: Record "Warehouse Activity Line";
    begin
        WarehouseActivityLine.SetRange("Activity Type", WarehouseActivityLine."Activity Type"::Pick);
        WarehouseActivityLine.SetRange("Location Code", LocationCode);
        exit(not WarehouseActivityLine.IsEmpty());
    end;
}
