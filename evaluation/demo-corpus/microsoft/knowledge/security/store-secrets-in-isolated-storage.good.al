table 50124 "Parcel Service Setup Good"
{
    DataClassification = CustomerContent;

    fields
    {
        field(1; "Primary Key"; Code[10]) { }
        field(2; "Service URL"; Text[250]) { }
    }
    keys
    {
        key(PK; "Primary Key") { Clustered = true; }
    }

    internal procedure SetClientSecret(NewSecret: SecretText)
    begin
        IsolatedStorage.Set('ParcelServiceClientSecret', NewSecret, DataScope::Company);
    end;

    internal procedure GetClientSecret() Secret: SecretText
    begin
        IsolatedStorage.Get('ParcelServiceClientSecret', DataScope::Company, Secret);
    end;
}
