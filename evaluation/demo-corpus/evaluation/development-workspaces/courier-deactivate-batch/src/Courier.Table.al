table 50450 Courier
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "No."; Code[20]) { }
        field(2; "Carrier Code"; Code[20]) { }
        field(3; Active; Boolean) { }
    }

    keys
    {
        key(PK; "No.") { Clustered = true; }
    }
}
