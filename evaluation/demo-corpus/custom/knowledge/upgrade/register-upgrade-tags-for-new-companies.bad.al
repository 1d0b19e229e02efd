codeunit 50175 "Fleet Odometer Upgrade Bad"
{
    Subtype = Upgrade;

    trigger OnUpgradePerCompany()
    var
        FleetVehicle: Record "Fleet Vehicle";
        UpgradeTag: Codeunit "Upgrade Tag";
    begin
        if UpgradeTag.HasUpgradeTag(OdometerUnitTagLbl) then
            exit;
        FleetVehicle.ModifyAll("Odometer Unit", FleetVehicle."Odometer Unit"::Kilometer);
        UpgradeTag.SetUpgradeTag(OdometerUnitTagLbl);
    end;

    var
        // Checked and set here, but no subscriber registers it.
        OdometerUnitTagLbl: Label 'FLEET-131-OdometerUnit-20240902', Locked = true;
}
