codeunit 50122 "Portal Order Lookup Good"
{
    procedure FilterOrdersByReference(CustomerNo: Code[20]; ExternalRef: Text[35]; var SalesHeader: Record "Sales Header")
    begin
        SalesHeader.SetRange("Document Type", SalesHeader."Document Type"::Order);
        SalesHeader.SetRange("Sell-to Customer No.", CustomerNo);
        SalesHeader.SetFilter("External Document No.", '%1', ExternalRef);
    end;
}
