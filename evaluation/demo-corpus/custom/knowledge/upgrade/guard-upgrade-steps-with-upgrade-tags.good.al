codeunit 50170 "Fleet Fuel Upgrade Good"
{
    Subtype = Upgrade;

    trigger OnUpgradePerCompany()
    var
        FleetVehicle: Record "Fleet Vehicle";
        UpgradeTag: Codeunit "Upgrade Tag";
        FleetUpgradeTags: Codeunit "Fleet Fuel Tags";
    begin
        if UpgradeTag.HasUpgradeTag(FleetUpgradeTags.DefaultFuelTypeTag()) then
            exit;
        FleetVehicle.SetRange("Fuel Type", FleetVehicle."Fuel Type"::" ");
        FleetVehicle.ModifyAll("Fuel Type", FleetVehicle."Fuel Type"::Diesel);
        UpgradeTag.SetUpgradeTag(FleetUpgradeTags.DefaultFuelTypeTag());
    end;
}

codeunit 50171 "Fleet Fuel Tags"
{
    procedure DefaultFuelTypeTag(): Code[250]
    begin
        exit('FLEET-118-DefaultFuelType-20240611');
    end;

    [EventSubscriber(ObjectType::Codeunit, Codeunit::"Upgrade Tag", 'OnGetPerCompanyUpgradeTags', '', false, false)]
    local procedure RegisterPerCompanyTags(var PerCompanyUpgradeTags: List of [Code[250]])
    begin
        PerCompanyUpgradeTags.Add(DefaultFuelTypeTag());
    end;
}
