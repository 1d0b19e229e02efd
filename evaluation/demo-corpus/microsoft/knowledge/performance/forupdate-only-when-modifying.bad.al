codeunit 50107 "Open Job Lister Bad"
{
    procedure OpenJobNumbers(CustomerNo: Code[20]; var JobNos: List of [Code[20]])
    var
        Job: Record Job;
    begin
        Job.SetRange("Bill-to Customer No.", CustomerNo);
        Job.SetRange(Status, Job.Status::Open);
        Job.SetLoadFields("No.");
        // Rows are locked although nothing below writes to them.
        if Job.FindSet(true) then
            repeat
                JobNos.Add(Job."No.");
            until Job.Next() = 0;
    end;
}
