codeunit 50109 "Vendor Invoice Probe Bad"
{
    procedure VendorHasOpenInvoices(VendorNo: Code[20]): Boolean
    var
        PurchaseHeader: Record "Purchase Header";
    begin
        PurchaseHeader.SetRange("Document Type", PurchaseHeader."Document Type"::Invoice);
        PurchaseHeader.SetRange("Buy-from Vendor No.", VendorNo);
        exit(PurchaseHeader.Count() <> 0);
    end;
}
