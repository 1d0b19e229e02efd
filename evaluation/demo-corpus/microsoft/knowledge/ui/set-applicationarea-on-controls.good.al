page 50192 "Vehicle Card Good"
{
    PageType = Card;
    SourceTable = "Fleet Vehicle";
    ApplicationArea = All;

    layout
    {
        area(Content)
        {
            group(General)
            {
                field("No."; Rec."No.") { ToolTip = 'Specifies the number of the vehicle.'; }
                field("License Plate"; Rec."License Plate") { ToolTip = 'Specifies the registration plate of the vehicle.'; }
                field("Fuel Type"; Rec."Fuel Type") { ToolTip = 'Specifies which fuel the vehicle uses.'; }
            }
        }
    }
}
