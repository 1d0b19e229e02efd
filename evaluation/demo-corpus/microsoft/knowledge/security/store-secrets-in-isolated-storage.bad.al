table 50125 "Parcel Service Setup Bad"
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "Primary Key"; Code[10]) { }
        field(2; "Service URL"; Text[250]) { }
        // The secret sits in clear text next to ordinary settings.
        field(3; "Client Secret"; Text[100]) { }
    }
    keys
    {
        key(PK; "Primary Key") { Clustered = true; }
    }
}
