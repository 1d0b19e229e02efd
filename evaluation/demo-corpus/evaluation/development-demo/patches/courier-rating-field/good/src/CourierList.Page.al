page 50400 "Courier List"
{
    PageType = List;
    SourceTable = Courier;
    ApplicationArea = All;
    UsageCategory = Lists;

    layout
    {
        area(Content)
        {
            repeater(Couriers)
            {
                field("No."; Rec."No.") { ApplicationArea = All; }
                field(Name; Rec.Name) { ApplicationArea = All; }
                field(Rating; Rec.Rating) { ApplicationArea = All; }
            }
        }
    }
}
