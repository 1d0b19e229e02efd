page 50301 "Courier Setup"
{
    PageType = Card;
    SourceTable = "Courier Setup";
    ApplicationArea = All;
    UsageCategory = Administration;
    InsertAllowed = false;
    DeleteAllowed = false;

    layout
    {
        area(Content)
        {
            group(Connection)
            {
                field("Service URL"; Rec."Service URL") { ToolTip = 'Specifies the address of the courier service.'; }
                field("Account Id"; Rec."Account Id") { ToolTip = 'Specifies the account at the courier service.'; }
                field("API Key"; Rec."API Key") { ToolTip = 'Specifies the key for the courier service.'; }
            }
        }
    }
}
