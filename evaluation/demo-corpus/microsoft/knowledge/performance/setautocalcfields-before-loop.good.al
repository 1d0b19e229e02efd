codeunit 50116 "Credit Exposure Scan Good"
{
    procedure CustomersOverLimit(var CustomerNos: List of [Code[20]])
    var
        Customer: Record Customer;
    begin
        Customer.SetFilter("Credit Limit (LCY)", '>0');
        Customer.SetLoadFields("No.", "Credit Limit (LCY)");
        Customer.SetAutoCalcFields("Balance (LCY)");
        if Customer.FindSet() then
            repeat
                if Customer."Balance (LCY)" > Customer."Credit Limit (LCY)" then
                    CustomerNos.Add(Customer."No.");
            until Customer.Next() = 0;
    end;
}
