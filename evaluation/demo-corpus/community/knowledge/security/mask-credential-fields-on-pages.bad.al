page 50145 "Carrier Connection Bad"
{
    PageType = Card;
    SourceTable = "Carrier Setup";
    ApplicationArea = All;
    UsageCategory = Administration;

    layout
    {
        area(Content)
        {
            group(Connection)
            {
                field(ApiKey; ApiKeyInput)
                {
                    Caption = 'API Key';
                    ToolTip = 'Specifies the key that the carrier issued to your company.';

                    trigger OnValidate()
                    begin
                        Rec.SetApiKey(ApiKeyInput);
                    end;
                }
            }
        }
    }

    var
        ApiKeyInput: Text;
}
