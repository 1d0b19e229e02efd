codeunit 50181 "Credit Gate Bad"
{
    procedure CheckOrderAmount(Customer: Record Customer; OrderAmount: Decimal)
    begin
        if (Customer."Credit Limit (LCY)" > 0) and (OrderAmount > Customer."Credit Limit (LCY)") then
            Error('The order amount ' + Format(OrderAmount) + ' exceeds the credit limit of customer ' + Customer."No." + '.');
    end;
}
