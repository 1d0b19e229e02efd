codeunit 50111 "Contact Mailing Bad"
{
    procedure CollectEmails(CompanyNo: Code[20]; var Recipients: List of [Text])
    var
        Contact: Record Contact;
    begin
        Contact.SetRange("Company No.", CompanyNo);
        Contact.SetRange(Type, Contact.Type::Person);
        Contact.SetFilter("E-Mail", '<>%1', '');
        // All Contact columns are read although one is used.
        if Contact.FindSet() then
            repeat
                Recipients.Add(Contact."E-Mail");
            until Contact.Next() = 0;
    end;
}
