codeunit 50301 "Courier Upgrade"
{
    Subtype = Upgrade;

    trigger OnUpgradePerCompany()
    begin
        // The phone number move is still to be written; see the development plan.
    end;
}
