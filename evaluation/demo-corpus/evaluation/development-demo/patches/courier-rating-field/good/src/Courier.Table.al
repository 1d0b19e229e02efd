table 50400 Courier
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "No."; Code[20]) { ToolTip = 'Specifies the courier number.'; }
        field(2; Name; Text[100]) { ToolTip = 'Specifies the courier name.'; }
        field(3; Rating; Integer) { MinValue = 0; MaxValue = 5; ToolTip = 'Specifies the courier rating from 0 to 5.'; }
    }

    keys
    {
        key(PK; "No.") { Clustered = true; }
    }
}
