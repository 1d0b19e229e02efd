codeunit 50450 "Courier Deactivation"
{
    procedure DeactivateCarrier(CarrierCode: Code[20])
    var
        Courier: Record Courier;
    begin
        Courier.SetRange("Carrier Code", CarrierCode);
        if Courier.Find('-') then
            repeat
                Courier.Active := false;
                Courier.Modify();
            until Courier.Next() = 0;
    end;
}
