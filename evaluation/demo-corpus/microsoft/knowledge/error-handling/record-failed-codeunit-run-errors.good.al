codeunit 50182 "Bank File Runner Good"
{
    procedure ImportFile(var BankImportBatch: Record "Bank Import Batch")
    begin
        if Codeunit.Run(Codeunit::"Bank File Import", BankImportBatch) then
            BankImportBatch.Status := BankImportBatch.Status::Imported
        else begin
            BankImportBatch.Status := BankImportBatch.Status::Failed;
            BankImportBatch."Failure Reason" := CopyStr(GetLastErrorText(), 1, MaxStrLen(BankImportBatch."Failure Reason"));
        end;
        BankImportBatch.Modify();
    end;
}
