table 50301 "Courier Setup"
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "Primary Key"; Code[10]) { }
        field(2; "Service URL"; Text[250]) { }
        field(3; "Account Id"; Text[50]) { }
    }

    keys
    {
        key(PK; "Primary Key") { Clustered = true; }
    }
}
