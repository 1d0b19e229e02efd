codeunit 50117 "Credit Exposure Scan Bad"
{
    procedure CustomersOverLimit(var CustomerNos: List of [Code[20]])
    var
        Customer: Record Customer;
    begin
        Customer.SetFilter("Credit Limit (LCY)", '>0');
        Customer.SetLoadFields("No.", "Credit Limit (LCY)");
        if Customer.FindSet() then
            repeat
                // A separate calculation query for every customer.
                Customer.CalcFields("Balance (LCY)");
                if Customer."Balance (LCY)" > Customer."Credit Limit (LCY)" then
                    CustomerNos.Add(Customer."No.");
            until Customer.Next() = 0;
    end;
}
