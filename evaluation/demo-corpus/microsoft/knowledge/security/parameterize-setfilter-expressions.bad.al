codeunit 50123 "Portal Order Lookup Bad"
{
    procedure FilterOrdersByReference(CustomerNo: Code[20]; ExternalRef: Text[35]; var SalesHeader: Record "Sales Header")
    begin
        SalesHeader.SetRange("Document Type", SalesHeader."Document Type"::Order);
        SalesHeader.SetRange("Sell-to Customer No.", CustomerNo);
        // The caller's text is used as the filter expression itself.
        SalesHeader.SetFilter("External Document No.", ExternalRef);
    end;
}
