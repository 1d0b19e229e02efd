codeunit 50177 "Fleet Install Defaults Bad"
{
    Subtype = Install;

    trigger OnInstallAppPerCompany()
    var
        FleetSetup: Record "Fleet Setup";
    begin
        // Fails when the setup row survived an earlier uninstall.
        FleetSetup.Init();
        FleetSetup."Service Interval (Days)" := 90;
        FleetSetup.Insert();
    end;
}
