page 50190 "Service Order List Good"
{
    PageType = List;
    SourceTable = "Vehicle Service Order";
    ApplicationArea = All;
    UsageCategory = Lists;
    Editable = false;

    layout
    {
        area(Content)
        {
            repeater(Orders)
            {
                field("No."; Rec."No.") { ToolTip = 'Specifies the number of the service order.'; }
                field("Vehicle No."; Rec."Vehicle No.") { ToolTip = 'Specifies the vehicle that is serviced.'; }
            }
        }
    }
    actions
    {
        area(Processing)
        {
            action(Release)
            {
                Caption = 'Release';
                Image = ReleaseDoc;
                ToolTip = 'Release the order so that the workshop can start.';
                trigger OnAction()
                begin
                    Rec.Release();
                end;
            }
        }
        area(Promoted)
        {
            actionref(Release_Promoted; Release) { }
        }
    }
}
