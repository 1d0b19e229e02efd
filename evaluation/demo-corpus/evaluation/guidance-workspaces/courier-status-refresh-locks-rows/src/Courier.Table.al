table 50300 Courier
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "No."; Code[20]) { }
        field(2; Name; Text[100]) { }
        field(3; "Carrier Code"; Code[20]) { }
        field(4; Active; Boolean) { }
    }

    keys
    {
        key(PK; "No.") { Clustered = true; }
    }
}
