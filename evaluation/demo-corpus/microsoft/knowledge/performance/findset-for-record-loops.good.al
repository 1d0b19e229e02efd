codeunit 50104 "Resource Rate Scan Good"
{
    procedure CollectPremiumResources(MinUnitPrice: Decimal; var ResourceNos: List of [Code[20]])
    var
        Resource: Record Resource;
    begin
        Resource.SetFilter("Unit Price", '>=%1', MinUnitPrice);
        Resource.SetLoadFields("No.");
        if Resource.FindSet() then
            repeat
                ResourceNos.Add(Resource."No.");
            until Resource.Next() = 0;
    end;
}
