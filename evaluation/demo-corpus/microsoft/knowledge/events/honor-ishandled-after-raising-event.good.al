codeunit 50150 "Delivery Date Planner Good"
{
    procedure CalcDeliveryDate(OrderDate: Date; var DeliveryDate: Date)
    var
        IsHandled: Boolean;
    begin
        IsHandled := false;
        OnBeforeCalcDeliveryDate(OrderDate, DeliveryDate, IsHandled);
        if IsHandled then
            exit;
        DeliveryDate := CalcDate('<+3D>', OrderDate);
    end;

    [IntegrationEvent(false, false)]
    local procedure OnBeforeCalcDeliveryDate(OrderDate: Date; var DeliveryDate: Date; var IsHandled: Boolean)
    begin
    end;
}
