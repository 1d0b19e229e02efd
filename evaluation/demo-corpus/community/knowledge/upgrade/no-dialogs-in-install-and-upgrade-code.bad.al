codeunit 50179 "Fleet Install Setup Bad"
{
    Subtype = Install;

    trigger OnInstallAppPerCompany()
    var
        FleetSetup: Record "Fleet Setup";
        SetupCreatedMsg: Label 'Fleet management defaults were created.';
    begin
        if FleetSetup.Get() then
            exit;
        FleetSetup.Init();
        FleetSetup."Default Depot Code" := 'MAIN';
        FleetSetup.Insert();
        Message(SetupCreatedMsg);
    end;
}
