table 50300 Courier
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "No."; Code[20]) { }
        field(2; Name; Text[100]) { }
        field(3; "Carrier Code"; Code[20]) { }
        field(4; Active; Boolean) { }
        field(5; "Courier Phone"; Text[30])
        {
            ObsoleteState = Pending;
            ObsoleteReason = 'Replaced by Contact Phone No.';
            ObsoleteTag = '2.0';
        }
        field(6; "Contact Phone No."; Text[30]) { ExtendedDatatype = PhoneNo; }
    }

    keys
    {
        key(PK; "No.") { Clustered = true; }
    }
}
