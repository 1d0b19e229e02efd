codeunit 50112 "Statement Flag Update Good"
{
    procedure EnableStatements(PostingGroup: Code[20])
    var
        Customer: Record Customer;
    begin
        Customer.SetRange("Customer Posting Group", PostingGroup);
        Customer.ModifyAll("Print Statements", true);
    end;
}
