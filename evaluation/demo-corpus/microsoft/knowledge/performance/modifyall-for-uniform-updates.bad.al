codeunit 50113 "Statement Flag Update Bad"
{
    procedure EnableStatements(PostingGroup: Code[20])
    var
        Customer: Record Customer;
    begin
        Customer.SetRange("Customer Posting Group", PostingGroup);
        // Same constant written to every row, one statement at a time.
        if Customer.FindSet(true) then
            repeat
                Customer."Print Statements" := true;
                Customer.Modify();
            until Customer.Next() = 0;
    end;
}
