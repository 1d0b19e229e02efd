codeunit 50180 "Credit Gate Good"
{
    procedure CheckOrderAmount(Customer: Record Customer; OrderAmount: Decimal)
    var
        OverLimitErr: Label 'The order amount %1 exceeds the credit limit of customer %2.', Comment = '%1 = order amount, %2 = customer number';
    begin
        if (Customer."Credit Limit (LCY)" > 0) and (OrderAmount > Customer."Credit Limit (LCY)") then
            Error(OverLimitErr, OrderAmount, Customer."No.");
    end;
}
