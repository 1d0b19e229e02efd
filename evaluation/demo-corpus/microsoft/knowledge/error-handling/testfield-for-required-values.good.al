codeunit 50184 "Transfer Release Check Good"
{
    procedure CheckBeforeRelease(TransferHeader: Record "Transfer Header")
    begin
        TransferHeader.TestField("Transfer-from Code");
        TransferHeader.TestField("Transfer-to Code");
        TransferHeader.TestField("In-Transit Code");
    end;
}
