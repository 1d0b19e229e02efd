codeunit 50110 "Contact Mailing Good"
{
    procedure CollectEmails(CompanyNo: Code[20]; var Recipients: List of [Text])
    var
        Contact: Record Contact;
    begin
        Contact.SetRange("Company No.", CompanyNo);
        Contact.SetRange(Type, Contact.Type::Person);
        Contact.SetFilter("E-Mail", '<>%1', '');
        Contact.SetLoadFields("E-Mail");
        if Contact.FindSet() then
            repeat
                Recipients.Add(Contact."E-Mail");
            until Contact.Next() = 0;
    end;
}
