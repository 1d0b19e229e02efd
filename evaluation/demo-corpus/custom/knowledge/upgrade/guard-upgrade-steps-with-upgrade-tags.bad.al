codeunit 50172 "Fleet Fuel Upgrade Bad"
{
    Subtype = Upgrade;

    trigger OnUpgradePerCompany()
    var
        FleetVehicle: Record "Fleet Vehicle";
    begin
        // Runs again on every future upgrade.
        FleetVehicle.SetRange("Fuel Type", FleetVehicle."Fuel Type"::" ");
        FleetVehicle.ModifyAll("Fuel Type", FleetVehicle."Fuel Type"::Diesel);
    end;
}
