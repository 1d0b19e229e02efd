codeunit 50301 "Courier Upgrade"
{
    Subtype = Upgrade;

    trigger OnUpgradePerCompany()
    begin
        MoveCourierPhone();
    end;

    local procedure MoveCourierPhone()
    var
        Courier: Record Courier;
    begin
        Courier.SetFilter("Courier Phone", '<>%1', '');
        if Courier.FindSet(true) then
            repeat
                Courier."Contact Phone No." := Courier."Courier Phone";
                Courier.Modify();
            until Courier.Next() = 0;
    end;
}
