codeunit 50105 "Resource Rate Scan Bad"
{
    procedure CollectPremiumResources(MinUnitPrice: Decimal; var ResourceNos: List of [Code[20]])
    var
        Resource: Record Resource;
    begin
        Resource.SetFilter("Unit Price", '>=%1', MinUnitPrice);
        Resource.SetLoadFields("No.");
        // The loop is opened with a single-row read.
        if Resource.FindFirst() then
            repeat
                ResourceNos.Add(Resource."No.");
            until Resource.Next() = 0;
    end;
}
