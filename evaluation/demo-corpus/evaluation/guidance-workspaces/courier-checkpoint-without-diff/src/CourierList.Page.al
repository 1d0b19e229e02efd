page 50300 "Courier List"
{
    PageType = List;
    SourceTable = Courier;
    ApplicationArea = All;
    UsageCategory = Lists;
    Editable = false;

    layout
    {
        area(Content)
        {
            repeater(Couriers)
            {
                field("No."; Rec."No.") { ToolTip = 'Specifies the courier number.'; }
                field(Name; Rec.Name) { ToolTip = 'Specifies the courier name.'; }
            }
        }
    }
}
