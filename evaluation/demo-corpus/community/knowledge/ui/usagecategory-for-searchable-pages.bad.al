page 50147 "Fleet Vehicles Bad"
{
    PageType = List;
    SourceTable = "Fleet Vehicle";
    CardPageId = "Vehicle Card";
    ApplicationArea = All;
    Editable = false;

    layout
    {
        area(Content)
        {
            repeater(Vehicles)
            {
                field("No."; Rec."No.") { ToolTip = 'Specifies the number of the vehicle.'; }
                field("License Plate"; Rec."License Plate") { ToolTip = 'Specifies the registration plate of the vehicle.'; }
            }
        }
    }
}
