codeunit 50176 "Fleet Install Defaults Good"
{
    Subtype = Install;

    trigger OnInstallAppPerCompany()
    var
        FleetSetup: Record "Fleet Setup";
    begin
        if FleetSetup.Get() then
            exit;
        FleetSetup.Init();
        FleetSetup."Service Interval (Days)" := 90;
        FleetSetup.Insert();
    end;
}
