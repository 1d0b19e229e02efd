codeunit 50151 "Delivery Date Planner Bad"
{
    procedure CalcDeliveryDate(OrderDate: Date; var DeliveryDate: Date)
    var
        IsHandled: Boolean;
    begin
        IsHandled := false;
        OnBeforeCalcDeliveryDate(OrderDate, DeliveryDate, IsHandled);
        // The flag is never read; the default always runs.
        DeliveryDate := CalcDate('<+3D>', OrderDate);
    end;

    [IntegrationEvent(false, false)]
    local procedure OnBeforeCalcDeliveryDate(OrderDate: Date; var DeliveryDate: Date; var IsHandled: Boolean)
    begin
    end;
}
