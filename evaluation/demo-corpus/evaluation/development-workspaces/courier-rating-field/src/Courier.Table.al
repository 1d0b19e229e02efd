table 50400 Courier
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "No."; Code[20]) { ToolTip = 'Specifies the courier number.'; }
        field(2; Name; Text[100]) { ToolTip = 'Specifies the courier name.'; }
    }

    keys
    {
        key(PK; "No.") { Clustered = true; }
    }
}
