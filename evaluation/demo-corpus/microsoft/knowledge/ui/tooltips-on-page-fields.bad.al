page 50195 "Driver Card Bad"
{
    PageType = Card;
    SourceTable = "Fleet Driver";
    ApplicationArea = All;

    layout
    {
        area(Content)
        {
            group(General)
            {
                field("No."; Rec."No.") { ToolTip = 'Specifies the number of the driver.'; }
                field(Name; Rec.Name) { ToolTip = 'Specifies the full name of the driver.'; }
                field("License Expiry Date"; Rec."License Expiry Date") { }
            }
        }
    }
}
