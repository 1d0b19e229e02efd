codeunit 50173 "Fleet Odometer Upgrade Good"
{
    Subtype = Upgrade;

    trigger OnUpgradePerCompany()
    var
        FleetVehicle: Record "Fleet Vehicle";
        UpgradeTag: Codeunit "Upgrade Tag";
        OdometerTags: Codeunit "Fleet Odometer Tags";
    begin
        if UpgradeTag.HasUpgradeTag(OdometerTags.OdometerUnitTag()) then
            exit;
        FleetVehicle.ModifyAll("Odometer Unit", FleetVehicle."Odometer Unit"::Kilometer);
        UpgradeTag.SetUpgradeTag(OdometerTags.OdometerUnitTag());
    end;
}

codeunit 50174 "Fleet Odometer Tags"
{
    procedure OdometerUnitTag(): Code[250]
    begin
        exit('FLEET-131-OdometerUnit-20240902');
    end;

    [EventSubscriber(ObjectType::Codeunit, Codeunit::"Upgrade Tag", 'OnGetPerCompanyUpgradeTags', '', false, false)]
    local procedure RegisterPerCompanyTags(var PerCompanyUpgradeTags: List of [Code[250]])
    begin
        PerCompanyUpgradeTags.Add(OdometerUnitTag());
    end;
}
