codeunit 50108 "Vendor Invoice Probe Good"
{
    procedure VendorHasOpenInvoices(VendorNo: Code[20]): Boolean
    var
        PurchaseHeader: Record "Purchase Header";
    begin
        PurchaseHeader.SetRange("Document Type", PurchaseHeader."Document Type"::Invoice);
        PurchaseHeader.SetRange("Buy-from Vendor No.", VendorNo);
        exit(not PurchaseHeader.IsEmpty());
    end;
}
