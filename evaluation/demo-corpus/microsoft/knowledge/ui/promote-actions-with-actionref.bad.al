page 50191 "Service Order List Bad"
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
                // Legacy promotion properties on the action itself.
                Promoted = true;
                PromotedCategory = Process;
                PromotedOnly = true;
                trigger OnAction()
                begin
                    Rec.Release();
                end;
            }
        }
    }
}
