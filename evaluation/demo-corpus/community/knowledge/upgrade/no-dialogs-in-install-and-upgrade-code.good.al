codeunit 50178 "Fleet Install Setup Good"
{
    Subtype = Install;

    trigger OnInstallAppPerCompany()
    var
        FleetSetup: Record "Fleet Setup";
    begin
        if FleetSetup.Get() then
            exit;
        FleetSetup.Init();
        FleetSetup."Default Depot Code" := 'MAIN';
        FleetSetup.Insert();
    end;
}
