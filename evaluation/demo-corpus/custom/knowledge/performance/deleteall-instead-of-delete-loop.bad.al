codeunit 50161 "Comment Purge Bad"
{
    procedure PurgeOrderComments(OrderNo: Code[20])
    var
        SalesCommentLine: Record "Sales Comment Line";
    begin
        SalesCommentLine.SetRange("Document Type", SalesCommentLine."Document Type"::Order);
        SalesCommentLine.SetRange("No.", OrderNo);
        // One delete statement per comment line.
        if SalesCommentLine.FindSet(true) then
            repeat
                SalesCommentLine.Delete();
            until SalesCommentLine.Next() = 0;
    end;
}
